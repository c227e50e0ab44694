"""edueval: evaluate educational AI against real and simulated students."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("edueval")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+local"

__all__ = ["__version__"]
