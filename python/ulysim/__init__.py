from ._ext import version as __version__
