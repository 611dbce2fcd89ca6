"""nbgrader configuration for the course's exercises.

This directory is the nbgrader course directory: instructors run the nbgrader
commands from here (see README.md). Assignments live in source/<name>/.
"""

import os

c = get_config()  # noqa: F821  (injected by nbgrader when it loads this file)

# The course directory is wherever this file is, so a copy of exercises/ (as
# the tests make in a temporary directory) is a self-contained course.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "collective"

# Each cell of a student notebook gets at most this many seconds while it is
# validated or autograded. nbgrader's `Execute` preprocessor subclasses
# nbconvert's ExecutePreprocessor and reads this section too.
c.ExecutePreprocessor.timeout = 120

# On a timeout, interrupt the kernel and carry on with the next cell instead of
# aborting. An endless student cell is then recorded as a CellTimeoutError
# output, the tests that depend on it fail, and the notebook is still graded.
# (True is nbgrader 0.9's default; it is set here so nobody turns it off.)
c.Execute.interrupt_on_timeout = True
