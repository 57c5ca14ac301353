"""Sphinx configuration of the course website (built by ``scripts/build_site.py``; see README, "The website").

The pages are made from the notebooks' stored outputs: nothing is executed (``nb_execution_mode = "off"``), and
nothing is fetched: MathJax comes from the installed ``jupyter-server-mathjax`` package, the theme's assets from
``sphinx-book-theme``, and the widgets appear as the pictures they drew when the notebook was built.
"""
from pathlib import Path

import jupyter_server_mathjax

project = "Neural networks and language models, in notebooks"
author = "the course's authors"
copyright = "the course's authors"

extensions = ["myst_nb"]
nb_execution_mode = "off"  # the stored outputs are the content
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3  # "#course-map"-style anchors for headings, as GitHub makes them
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
suppress_warnings = ["myst.header"]  # notebooks start their sections at "##" under a "#" title, one per cell

html_theme = "sphinx_book_theme"
html_title = project
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": True,  # the .ipynb, from this site
    "navigation_with_keys": False,
}
html_last_updated_fmt = None
html_copy_source = True

# MathJax 2 from the installed package, served from _static: no CDN.
_MATHJAX = Path(jupyter_server_mathjax.__file__).parent / "static"
html_static_path = [str(_MATHJAX)]
mathjax_path = "MathJax.js?config=TeX-AMS-MML_HTMLorMML"
mathjax2_config = {"tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]],
                               "processRefs": False, "processEnvironments": False}}  # fmt: skip
