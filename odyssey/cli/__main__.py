import sys

from odyssey.cli import main

sys.exit(main())
