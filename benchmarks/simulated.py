"""What a result measured on simulated Pis (pisim) can and cannot show, in one line for every
page that answers from such runs: a figure of a simulated board is the host's, shaped."""

MODELS = (
    "the CPU share follows the booted arm_freq (a quota of the host's CPU)",
    "a USB Ethernet relay pays CPU per frame (the Pi 1 B's link follows its clock)",
    "the 32-bit userland is Debian i386 on the host's 64-bit kernel",
    "each port is shaped to its line rate",
)
DOES_NOT_MODEL = (
    "real thermals and heat throttling",
    "the NIC's offloads",
    "the Arm crypto extensions and NEON",
    "a Pi's caches, memory and SD card",
)
NOTE = (
    "Simulated boards. What the simulation models: "
    + "; ".join(MODELS)
    + ". What it does not: "
    + "; ".join(DOES_NOT_MODEL)
    + ". A direction it shows is the model's; its size is not a Pi's."
)
