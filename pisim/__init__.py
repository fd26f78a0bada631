"""pisim: a simulated Raspberry Pi farm (real sshd in network/mount namespaces).

from pisim import Farm, Faults, PROFILES, cleanup_all
"""

from .farm import Farm, cleanup_all, cleanup_stale
from .faults import SMSC95XX_CYCLES_PER_FRAME, Faults
from .node import Node
from .profiles import PROFILES, Profile
from .util import PisimError

__all__ = [
    "PROFILES",
    "SMSC95XX_CYCLES_PER_FRAME",
    "Farm",
    "Faults",
    "Node",
    "PisimError",
    "Profile",
    "cleanup_all",
    "cleanup_stale",
]
