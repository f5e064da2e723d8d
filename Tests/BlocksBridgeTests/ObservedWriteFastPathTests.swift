import Testing
@testable import BlocksBridge

/// The fast path of observed writes (ObservedWrite.c, and the engine's loop over plain tasks)
/// bypasses `deliver`, so it must know every option an observation can have: the engine decides
/// each one in `FAST_PATH_OPTIONS` (ObservationEngine.lua), and a new option fails here until it is
/// decided there.
@Suite struct ObservedWriteFastPathTests {
    @Test func everyOptionObserveAcceptsIsDecidedForTheFastPath() throws {
        let state = try LuaState()
        // Loads the engine, as the first observation does.
        try state.run("local bk = require 'bk' bk.addObserverForKeyPath({}, 'k', function() end)")
        let engine = "debug.getregistry()['bk.observation']"
        // What the engine holds as the accepted options is `Observation.optionNames`, which
        // `checkOptions` takes from bk.addObserverForKeyPath(s) and cc_easyObserve.
        #expect(try state.run("return table.concat(\(engine).fastPathOptionNames or {}, ',')", as: String.self)
                == Observation.optionNames.joined(separator: ","))
        for name in Observation.optionNames {
            let decision = try state.run("return type(\(engine).fastPathOptions['\(name)'])", as: String.self)
            #expect(decision == "boolean", "option '\(name)' is neither taken nor refused by the fast path")
        }
    }
}
