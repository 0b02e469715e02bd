"""Reports: from an ``audit-result/1`` document to what a person reads.
``render`` writes the HTML and Markdown report, ``figures`` draws its
figures, ``gallery`` audits every built-in algorithm and indexes the reports.
Reads result documents; only ``gallery`` runs audits (``audit.engine``)."""
