from hypothesis import settings

pytest_plugins = ["tests.support.daemon", "tests.fakes.fixtures"]

# Property tests check results, never speed: a deadline per example only measures how busy the
# machine is (the suite runs on 2 cores beside daemons and a browser), so none is set.
settings.register_profile("openvaala", deadline=None)
settings.load_profile("openvaala")
