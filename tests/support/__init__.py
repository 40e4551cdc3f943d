"""The tests' shared helpers (fakes, stand-ins, real servers on loopback), one module each."""
