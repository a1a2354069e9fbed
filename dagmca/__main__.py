import sys

from dagmca.cli.app import main

sys.exit(main())
