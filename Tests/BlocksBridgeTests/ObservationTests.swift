import Testing
import CLua
@testable import BlocksBridge

/// An observable Swift class, declared the way hosts declare theirs.
private final class Person: LuaObservable, LuaConvertible {
    let luaObservers = LuaObservers()
    @LuaObserved("name") var name = "ada"
    @LuaObserved("age") var age = 36
    @LuaObserved("friend") var friend: String? = nil
    var plain = 0

    static let luaClass = LuaClass(
        name: "test.Person",
        methods: LuaObservers.methods,
        properties: [
            .observable("name", \Person.name), .observable("age", \Person.age),
            .observable("friend", \Person.friend),
        ])
}

/// A bridged class without observable properties.
private final class Plain: LuaBridged {
    static let luaClass = LuaClass(name: "test.Plain")
}

/// A scripting state with `person` as a global, as the README shows hosts doing it.
private func personState(_ person: Person) throws -> LuaState {
    try scriptingState { try $0.setGlobal("person", person) }
}

@Suite struct ObservationTests {
    @Test func luaObservesASwiftPropertySetFromSwift() throws {
        let person = Person()
        let state = try personState(person)
        try state.run("""
            log = {}
            bk.addObserverForKeyPath(person, "name", {"new", "old"}, function(p, c)
              log[#log + 1] = c.old .. "->" .. c.new .. (p == person and "" or " (wrong object)")
            end)
            """)
        person.name = "grace"
        person.name = "grace"
        #expect(try state.run("return table.concat(log, ' ')", as: String.self) == "ada->grace grace->grace")
    }

    @Test func luaSetsGoThroughTheSwiftSetterAndNotifyBothSides() throws {
        let person = Person()
        let state = try personState(person)
        var seen: [String] = []
        let token = person.luaObservers.observe("age") { change in
            seen.append("\(change.old)->\(change.new)")
        }
        try state.run("""
            count = 0
            bk.addObserverForKeyPath(person, "age", function() count = count + 1 end)
            person.age = 37
            """)
        #expect(person.age == 37)
        #expect(seen == ["36->37"])
        #expect(try state.run("return count", as: Int.self) == 1)
        person.luaObservers.removeObserver(token)
        person.age = 38
        #expect(seen == ["36->37"])
        #expect(try state.run("return count, person.age", as: Int.self) == 2)
    }

    @Test func priorNotificationSeesTheOldValue() throws {
        let person = Person()
        let state = try personState(person)
        try state.run("""
            log = {}
            bk.addObserverForKeyPath(person, "name", {"prior", "new"}, function(p, c)
              log[#log + 1] = (c.prior and "prior:" or "post:") .. p.name
            end)
            """)
        person.name = "grace"
        #expect(try state.run("return table.concat(log, ' ')", as: String.self) == "prior:ada post:grace")
    }

    @Test func wrongTypeFromLuaIsAnErrorAndNothingChanges() throws {
        let person = Person()
        let state = try personState(person)
        #expect(throws: LuaError.self) { try state.run("person.age = 'old'") }
        do {
            try state.run("person.age = 'old'")
        } catch {
            #expect(error.message.contains("bad value for field 'age' of test.Person (number expected, got string)"))
        }
        #expect(person.age == 36)
        try state.run("person.friend = 'bob'; person.friend = nil")
        #expect(person.friend == nil)
    }

    @Test func methodsAndListingOnBridgedObjects() throws {
        let person = Person()
        let state = try personState(person)
        let values = try state.run("""
            local id = person:bk_addObserverForKeyPath("name", {identifier = "x"}, function() end)
            local list = person:observers()
            person:bk_removeObserversWithIdentifier("x")
            return id, #list, list[1].keyPaths[1], #bk.observers(person)
            """)
        #expect(values.map(\.scalar) == [.string("x"), .integer(1), .string("name"), .integer(0)])
    }

    @Test func keyPathThroughATableToASwiftObject() throws {
        let person = Person()
        let state = try personState(person)
        try state.run("""
            model = { owner = person }
            log = {}
            bk.addObserverForKeyPath(model, "owner.name", {"new"}, function(m, c) log[#log + 1] = tostring(c.new) end)
            """)
        person.name = "grace"
        try state.run("model.owner = nil")
        person.name = "hopper"   // detached: no notification
        #expect(try state.run("return table.concat(log, ' ')", as: String.self) == "grace nil")
    }

    @Test func taskErrorsAreReportedAndOtherObserversRun() throws {
        let person = Person()
        let state = try personState(person)
        try state.run("""
            ran = 0
            errors = {}
            debug.getregistry()["bk.onError"] = function(message) errors[#errors + 1] = message end
            bk.addObserverForKeyPath(person, "name", function() error("boom") end)
            bk.addObserverForKeyPath(person, "name", function() ran = ran + 1 end)
            """)
        person.name = "x"
        #expect(try state.run("return ran", as: Int.self) == 1)
        let reported = try state.run("return errors[1]", as: String.self)
        #expect(reported.contains("boom") && reported.contains("stack traceback"))
    }

    @Test func notObservableObjectsAreRejected() throws {
        let state = try scriptingState()
        let stack = state.stack
        stack.pushGlobalTable()
        stack.push(object: Plain())
        stack.rawSet(-2, field: "plain")
        stack.pop()
        do {
            try state.run("bk.addObserverForKeyPath(plain, 'x', function() end)")
            Issue.record("expected an error")
        } catch {
            #expect(error.message.contains("bad argument #1 to 'addObserverForKeyPath' (object is not observable)"))
        }
    }

    @Test func observationsEndWithTheUserdataAndTheStateCanGo() throws {
        let person = Person()
        do {
            let state = try personState(person)
            try state.run("""
                bk.addObserverForKeyPath(person, "name", function() hits = (hits or 0) + 1 end)
                person.name = "a"
                """)
            #expect(try state.run("return hits", as: Int.self) == 1)
        }
        // The state is gone: setting the property must not touch it.
        person.name = "b"
        #expect(person.name == "b")
    }
}

extension ObservationTests {
    @Test func setFromACoroutineNotifiesOnThatThread() throws {
        let person = Person()
        let state = try personState(person)
        let values = try state.run("""
            local seen
            bk.addObserverForKeyPath(person, "name", {"new"}, function(p, c)
              seen = c.new .. (select(2, coroutine.running()) and " in main" or " in coroutine")
            end)
            local co = coroutine.wrap(function() person.name = "co" coroutine.yield() end)
            co()
            return seen
            """)
        #expect(values.first?.string == "co in coroutine")
    }
}

extension ObservationTests {
    @Test func rawWalkersFindObservedFields() throws {
        let state = try scriptingState()
        try state.run("t = {a = 1, b = 2}; bk.addObserverForKeyPath(t, 'a', function() end)")
        let stack = state.stack
        let base = stack.top
        stack.pushGlobalTable()
        stack.rawGet(-1, field: "t")
        let table = stack.top
        #expect(stack.rawGet(table, field: "a") == .nil)   // moved out of the table
        stack.pop()
        #expect(stack.pushObservedFields(of: table))
        #expect(stack.rawGet(-1, field: "a") == .number)
        stack.top = base
        try state.run("bk.removeAllBlockObservers(t)")
        stack.pushGlobalTable()
        stack.rawGet(-1, field: "t")
        #expect(!stack.pushObservedFields(of: -1))
        #expect(stack.rawGet(-1, field: "a") == .number)
        stack.top = base
    }
}

extension ObservationTests {
    @Test func aSwiftHostObservesALuaTable() throws {
        let state = try LuaState()
        try state.run("settings = { volume = 1 }")
        let settings = try state.global("settings", as: LuaRef.self)
        let seen = Locked<[String]>([])
        try state.call("bk.addObserverForKeyPath", settings, "volume", ["new", "old"],
                       LuaClosure { (_: LuaRef, change: [String: LuaValue]) in
                           let line = "\(change["old"]?.integer ?? -1)->\(change["new"]?.integer ?? -1)"
                           seen.withLock { $0.append(line) }
                       })
        try state.run("settings.volume = 5; settings.volume = 7")
        #expect(seen.withLock { $0 } == ["1->5", "5->7"])
    }
}

extension ObservationTests {
    @Test func observationWorksInASandbox() throws {
        let state = try LuaState(sandbox: .standard)
        let values = try state.run("""
            local bk = require "bk"
            local t, seen = { a = 1 }, {}
            bk.addObserverForKeyPath(t, "a", {"new"}, function(_, c) seen[#seen + 1] = c.new end)
            t.a = 2
            local n = 0
            for _ in pairs(t) do n = n + 1 end
            return seen[1], n, next(t)
            """)
        #expect(values.map(\.scalar) == [.integer(2), .integer(1), .string("a"), .integer(2)])
    }

    @Test func withoutTheBaseLibraryObservingIsAnError() throws {
        let state = try LuaState(standardLibraries: false)
        let stack = state.stack
        BKModule.pushModule(on: stack)
        stack.rawGet(-1, field: "addObserverForKeyPath")
        stack.pushNewTable()
        stack.push("a")
        stack.push(function: "task") { _ in 0 }
        #expect(throws: LuaError.self) { try stack.call(arguments: 3, results: 0) }
        stack.top = 0
    }
}

extension ObservationTests {
    @Test func twoStatesObserveOneSwiftObject() throws {
        let person = Person()
        let first = try personState(person)
        let second = try personState(person)
        for state in [first, second] {
            try state.run("""
                seen = {}
                bk.addObserverForKeyPath(person, "name", {"new"}, function(_, c) seen[#seen + 1] = c.new end)
                """)
        }
        try first.run("person.name = 'from first'")
        person.name = "from swift"
        for state in [first, second] {
            #expect(try state.run("return table.concat(seen, ', ')", as: String.self) == "from first, from swift")
        }
    }

    @Test func aCollectedUserdataEndsItsObservations() throws {
        let person = Person()
        let state = try personState(person)
        try state.run("""
            hits = 0
            bk.addObserverForKeyPath(person, "name", function() hits = hits + 1 end)
            person = nil
            collectgarbage(); collectgarbage()
            """)
        person.name = "nobody listens"
        #expect(try state.run("return hits", as: Int.self) == 0)
        // Pushed again, the object is a fresh userdata with no observations.
        try state.setGlobal("person", person)
        try state.run("person.name = 'again'")
        #expect(try state.run("return hits, #bk.observers(person)", as: Int.self) == 0)
    }
}

extension ObservationTests {
    /// Blocks may suspend: a Lua write of a Swift property from a task runs the Lua observers after
    /// the Swift setter, from Lua, so an observer that sleeps suspends only that task.
    @Test func luaObserversOfASwiftPropertySetInATaskMaySuspendIt() throws {
        let person = Person()
        let state = try personState(person)
        let swiftSide = Locked<[String]>([])
        person.luaObservers.observe("age") { change in swiftSide.withLock { $0.append("swift \(change.new)") } }
        let log = try state.run("""
            local log = {}
            bk.addObserverForKeyPath(person, "age", {"prior", "new"}, function(p, c)
              if c.prior then log[#log + 1] = "prior " .. p.age return end
              log[#log + 1] = "observer " .. c.new
              assert(bk.currentTask() ~= nil and coroutine.isyieldable(), "in the task")
              bk.sleep(0.01)
              log[#log + 1] = "observer end"
            end)
            bk.performBlock(function() log[#log + 1] = "timer" end, 0.002)
            local task = bk.async(function()
              person.age = 40
              log[#log + 1] = "after set " .. person.age
            end)
            log[#log + 1] = task.isFinished and "finished" or "suspended"
            bk.await(task)
            return table.concat(log, ",")
            """, as: String.self)
        #expect(log == "prior 36,observer 40,suspended,timer,observer end,after set 40")
        #expect(swiftSide.withLock { $0 } == ["swift 40"])
        // Outside a task the observers run inside the set, as always (and may run the loop).
        let outside = try state.run("""
            local log = {}
            bk.removeAllBlockObservers(person)
            bk.addObserverForKeyPath(person, "age", function() log[#log + 1] = "observer" end)
            person.age = 41
            log[#log + 1] = "after set"
            return table.concat(log, ",")
            """, as: String.self)
        #expect(outside == "observer,after set")
    }
}
