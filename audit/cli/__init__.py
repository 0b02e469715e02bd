"""The ``audit`` command line: ``main`` (the parser and dispatch), one module
per command (``run``, ``check`` with the suite file in ``suite``, ``listing``,
``regret``, ``history``, ``store``, ``report``), and what they share
(``common``).  The top layer: nothing below imports it."""
