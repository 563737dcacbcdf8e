"""The kit's pictures: pages and figures from the labs' tables.

Python 3 standard library only (3.6 or newer); the figures are drawn by
gnuplot (Debian: gnuplot-nox), the similarity list by similarity-tester's
sim_c. Both are optional: without them the pages say what to install and
still hold every table.

    figure.py      a figure (series of points, bars or timeline spans) and its
                   SVG, drawn by gnuplot's svg terminal
    page.py        HTML: escaping, tables, the page's frame and style
    tables.py      the labs' CSV tables, read by column name and checked
    labs.py        each lab's figures from its tables (the handout's figures)
    course.py      the course's Tesla K40 figures (and the book's), with sources
    similarity.py  unusually alike submissions, with sim_c
"""
