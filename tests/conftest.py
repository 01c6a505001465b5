pytest_plugins = ["tests.support.daemon", "tests.fakes.fixtures"]
