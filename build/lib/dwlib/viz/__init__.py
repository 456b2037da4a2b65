"""Every Altair chart and ipywidget of the book; the only layer that imports them."""
