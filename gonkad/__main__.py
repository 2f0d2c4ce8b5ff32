from gonkad.cli import main

main()
