from dagmca.cli.app import entry

entry()
