from dwlib.cli import main

if __name__ == "__main__":  # spawned workers (dwlib sweep --jobs) import this module again
    raise SystemExit(main())
