"""Fakes for tests and demonstrations, each named as a fake.

Nothing in the product imports this package: tests, benchmarks and ``.ci/main-job``
start what is here (for example the fake model server) in place of an external service
that CI cannot reach.
"""
