from scribed.cli import main

main()
