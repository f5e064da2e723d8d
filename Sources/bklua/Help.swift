import BlocksBridge

/// `bklua --help`: the usage, what bklua adds to lua5.4, and every function of the `bk` module,
/// read from the module's own table of libraries (so the list is never out of date).
enum Help {
    static func print(progname: String) {
        var text = """
        usage: \(progname) [options] [script [args]]
        Runs Lua 5.4 with BlocksBridge: `bk` and every bk.NAME as the global bk_NAME are preloaded,
        and after the script the loop runs until no block or timer is pending.
        With no script on a terminal it is a REPL.

        Available options are (as lua5.4's):
        \(Runner.luaOptions)
        bklua's own (before the script):
          --sandbox                 safe libraries only (no io, os.execute, debug, binary load)
          --memory-limit BYTES      cap Lua's memory
          --instruction-limit N     stop the run after N instructions
          --time-limit SECONDS      stop the run after SECONDS of wall-clock time
          --dap                     be a debug adapter (DAP on stdin/stdout; the client launches the
                                    script; first argument only)
          --dap-listen [HOST:]PORT [--dap-wait] script [args]
                                    run the script, accepting a DAP debugger on that TCP port
                                    (loopback by default; --dap-wait: wait for it; first argument only)
          --profile[=FILE]          sample the Lua stacks by CPU time (main code, tasks, workers);
                                    at exit write FILE (.svg: an interactive flame graph, the
                                    default bklua-profile.svg; .folded: collapsed stacks for
                                    flamegraph.pl, inferno, speedscope) and print the ten functions
                                    with the most samples on stderr
          --profile-rate=N          samples per second of CPU time (default 1000)
          --help                    show this help (first argument only)
          --annotations             print the bk module's LuaLS annotations (first argument only)

        Environment: LUA_INIT_5_4 or LUA_INIT (code, or @file, run first), LUA_PATH, LUA_CPATH;
        for the REPL, BKLUA_HISTORY (history file, default ~/.bklua_history; empty: none) and NO_COLOR.

        The bk module (BlocksBridge \(BKModule.version)); reference: docs/reference.md (at the prompt:
        help(bk.map), help(ch.receive), :help Task), LuaLS annotations: library/bk.lua and, for bklua's
        globals, library/bklua.lua. From stock lua5.4: `luarocks --lua-version 5.4 make` in a checkout
        installs bk.so (then `local bk = require "bk"`), or scripts/build-module builds it in .build/lua.

        """
        for library in BKModule.libraries {
            text += wrap(library.name + ":", library.functions.map(\.name) + library.luaFunctionNames)
        }
        StandardStreams.writeOutput(text)
    }

    /// `  Name: a b c` wrapped at 100 columns, continuation lines indented.
    private static func wrap(_ title: String, _ names: [String]) -> String {
        var lines: [String] = []
        var line = "  " + title
        for name in names {
            if line.count + 1 + name.count > 100 {
                lines.append(line)
                line = String(repeating: " ", count: title.count + 2)
            }
            line += " " + name
        }
        lines.append(line)
        return lines.joined(separator: "\n") + "\n"
    }
}
