"""ddpsim.bench.python_jobs.run: a job whose worker aborts as it ends (TEARDOWN_ABORT) is run again,
up to TEARDOWN_ATTEMPTS runs in all, and said in the log; one more abort, or any other failure,
stays a failure."""
import os
import sys
import tempfile
import textwrap
import unittest

from ddpsim.bench import python_jobs

# Fails like a torch worker's abort on its first CALLS calls, then succeeds; counts its calls.
FAKE_JOB = textwrap.dedent('''\
    import os, sys
    count_file, aborts, message = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    calls = int(open(count_file).read()) + 1 if os.path.exists(count_file) else 1
    open(count_file, "w").write(str(calls))
    if calls <= aborts:
        print(message, flush=True)
        sys.exit(5)
''')


class RunRetriesATeardownAbort(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.job = os.path.join(self.dir.name, "job.py")
        with open(self.job, "w") as f:
            f.write(FAKE_JOB)
        self.count = os.path.join(self.dir.name, "calls")
        self.log = os.path.join(self.dir.name, "log.txt")

    def tearDown(self):
        self.dir.cleanup()

    def command(self, aborts, message=python_jobs.TEARDOWN_ABORT):
        return [sys.executable, self.job, self.count, str(aborts), "[rank 1] " + message]

    def calls(self):
        with open(self.count) as f:
            return int(f.read())

    def test_one_abort_is_run_again_and_said(self):
        self.assertTrue(python_jobs.run(self.command(aborts=1), self.log))
        self.assertEqual(self.calls(), 2)
        with open(self.log) as f:
            self.assertIn("a worker aborted (terminate called without an active exception): running the job once more",
                          f.read())

    def test_aborts_until_the_last_attempt_are_run_again(self):
        self.assertTrue(python_jobs.run(self.command(aborts=python_jobs.TEARDOWN_ATTEMPTS - 1), self.log))
        self.assertEqual(self.calls(), python_jobs.TEARDOWN_ATTEMPTS)

    def test_an_abort_on_every_attempt_fails(self):
        with self.assertRaises(RuntimeError):
            python_jobs.run(self.command(aborts=python_jobs.TEARDOWN_ATTEMPTS), self.log)
        self.assertEqual(self.calls(), python_jobs.TEARDOWN_ATTEMPTS)

    def test_another_failure_is_not_run_again(self):
        with self.assertRaises(RuntimeError):
            python_jobs.run(self.command(aborts=1, message="RuntimeError: Connection reset by peer"), self.log)
        self.assertEqual(self.calls(), 1)


if __name__ == "__main__":
    unittest.main()
