from kgservice.graphify.cli import main

main()
