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

html_context = {"default_mode": "light"}  # unset, the theme logs "Got invalid theme mode" on a first visit

# MathJax 2 from the installed package, served from _static: no CDN. The package ships the "-full" TeX config and
# the STIX-Web fonts, not MathJax's TeX fonts, so MathJax is told to use those (and not to probe for others).
_MATHJAX = Path(jupyter_server_mathjax.__file__).parent / "static"
html_static_path = [str(_MATHJAX)]
mathjax_path = "MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax2_config = {
    "tex2jax": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processRefs": False,
        "processEnvironments": False,
        # myst marks each page tex2jax_ignore and re-enables math with a MathJax 3 setting only
        "processClass": "tex2jax_process|mathjax_process|math|output_area",
    },
    "HTML-CSS": {
        "availableFonts": [],
        "preferredFont": None,
        "webFont": "STIX-Web",
        "imageFont": None,
        "styles": {"@font-face": {"font-family": "MathJax_Blank", "src": "local('MathJax_Blank')"}},
    },
    # the hidden MathML for screen readers asks for an AMS font the package does not ship (a 404)
    "menuSettings": {"assistiveMML": False},
    "fast-preview": {"disabled": True},
}
