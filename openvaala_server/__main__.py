import sys

from openvaala_server.cli import main

sys.exit(main())
