"""The app's launcher: ``python -m ui.serve [streamlit run's options] [-- app args]`` is
``streamlit run app.py`` with uploads written to disk as they arrive (``ui.upload_spool``)
and a first page that asks for its widgets' code from its first byte (``ui.index_page``),
which only a launcher can set up: Streamlit builds its routes before any page runs."""

from __future__ import annotations

import os
import sys

from ui import index_page, upload_spool

APP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "app.py")


def main(argv: list[str]) -> None:
    from streamlit.web import cli

    upload_spool.install()
    index_page.install()
    sys.argv = ["streamlit", "run", APP, *argv]
    cli.main()


if __name__ == "__main__":
    main(sys.argv[1:])
