from retx.cli import main

main()
