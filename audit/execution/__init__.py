"""Execution: where and how runs happen.  ``runs`` simulates chunks of
independent runs, ``executor`` runs chunks on local processes or (``cluster``)
a Dask cluster with the same streams for any number of workers, ``store``
keeps completed chunks and the history so a rerun resumes, and ``progress``
reports every phase.  Imports only ``algorithms`` from this project."""
