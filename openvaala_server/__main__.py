import sys

from openvaala_server.launch import main

sys.exit(main())
