from starter.cli.main import main

main()
