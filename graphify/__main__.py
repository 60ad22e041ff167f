from kgservice.graphify.dropin import main

main()
