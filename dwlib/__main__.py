from dwlib.cli import main

raise SystemExit(main())
