from retx.cli import main

# Guarded: the sweep's worker processes (spawn) import this module under another name.
if __name__ == "__main__":
    main()
