import Testing
import BlocksBridgeExport

/// A class exported with the macro alone.
@LuaExport
final class Counter: LuaExportable {
    var count = 0
    let name: String
    @LuaReadOnly var step = 1
    @LuaName("label") var title = "untitled"
    var doubled: Int { count * 2 }
    var history: [Int] = []
    @LuaIgnore var secret = "hidden"
    private var internalState = 0
    nonisolated(unsafe) static var created = 0
    static let limit = 100

    init(name: String) {
        self.name = name
        Counter.created += 1
    }

    @LuaName("withCount")
    convenience init(name: String, count: Int) {
        self.init(name: name)
        self.count = count
    }

    @discardableResult
    func increment(by amount: Int? = nil) -> Int {
        count += amount ?? step
        history.append(count)
        return count
    }

    func reset() { count = 0 }

    func add(_ a: Int, _ b: Int, _ c: Int, _ d: Int, _ e: Int) -> Int { a + b + c + d + e }

    func describe(prefix: String?, values: [String: Int]) -> String {
        (prefix ?? "") + values.keys.sorted().map { "\($0)=\(values[$0] ?? 0)" }.joined(separator: ",")
    }

    func merge(_ other: Counter) -> Counter {
        count += other.count
        return self
    }

    func apply(_ function: LuaRef) throws -> Int {
        count = try function.call(count, as: Int.self)
        return count
    }

    func check(limit: Int) throws {
        if count > limit { throw CounterError.tooBig(count) }
    }

    static func named(_ name: String) -> Counter { Counter(name: name) }
}

enum CounterError: Error, CustomStringConvertible {
    case tooBig(Int)
    var description: String {
        switch self { case .tooBig(let n): "count \(n) is too big" }
    }
}

@Suite struct ExportedClassTests {
    private func state() throws -> LuaState {
        let lua = try LuaState()
        try lua.register(Counter.self)
        return lua
    }

    // MARK: Methods

    @Test func methodsOfAnyArity() throws {
        let lua = try state()
        let counter = Counter(name: "a")
        try lua.setGlobal("c", counter)
        #expect(try lua.run("c:increment(); return c:increment(5)", as: Int.self) == 6)
        #expect(try lua.run("return c:add(1, 2, 3, 4, 5)", as: Int.self) == 15)
        _ = try lua.run("c:reset()")
        #expect(counter.count == 0)
        // bk_ aliases, as for hand-written classes
        #expect(try lua.run("return c:bk_increment(2)", as: Int.self) == 2)
    }

    @Test func optionalArrayDictionaryAndObjectParameters() throws {
        let lua = try state()
        try lua.setGlobal("c", Counter(name: "a"))
        #expect(try lua.run("return c:describe(nil, {b = 2, a = 1})", as: String.self) == "a=1,b=2")
        #expect(try lua.run("return c:describe('>', {})", as: String.self) == ">")
        let other = Counter(name: "b")
        other.count = 7
        try lua.setGlobal("other", other)
        #expect(try lua.run("return c:merge(other) == c and c.count", as: Int.self) == 7)
        #expect(try lua.run("c:increment(3); return c.history", as: [Int].self) == [10])
    }

    @Test func luaFunctionArgumentsAreCalled() throws {
        let lua = try state()
        try lua.setGlobal("c", Counter(name: "a"))
        #expect(try lua.run("c.count = 4; return c:apply(function(n) return n * 10 end)", as: Int.self) == 40)
        #expect(luaError(lua, "c:apply(function(n) error('inner') end)")?.contains("t:1: inner") == true)
    }

    @Test func thrownSwiftErrorsAreLuaErrors() throws {
        let lua = try state()
        try lua.setGlobal("c", Counter(name: "a"))
        #expect(luaError(lua, "c:check(10)") == nil)
        #expect(luaError(lua, "c.count = 11; c:check(10)") == "t:1: count 11 is too big")
        #expect(try lua.run("c.count = 11; return pcall(c.check, c, 10)", as: Bool.self) == false)
    }

    @Test func badArgumentsUseLuasWording() throws {
        let lua = try state()
        try lua.setGlobal("c", Counter(name: "a"))
        #expect(luaError(lua, "c:increment('x')") == "t:1: bad argument #1 to 'increment' (number expected, got string)")
        #expect(luaError(lua, "c:add(1, 2)") == "t:1: bad argument #3 to 'add' (number expected, got no value)")
        #expect(luaError(lua, "c.increment({})") == "t:1: bad argument #1 to 'increment' (Counter expected, got table)")
        #expect(luaError(lua, "c:merge(1)") == "t:1: bad argument #1 to 'merge' (Counter expected, got number)")
        #expect(luaError(lua, "c:describe(nil, {a = 'x'})") == "t:1: bad argument #2 to 'describe' (number value expected, got string)")
    }

    // MARK: Properties

    @Test func storedAndComputedProperties() throws {
        let lua = try state()
        let counter = Counter(name: "a")
        try lua.setGlobal("c", counter)
        _ = try lua.run("c.count = 21")
        #expect(counter.count == 21)
        #expect(try lua.run("return c.doubled", as: Int.self) == 42)
        #expect(try lua.run("return c.name", as: String.self) == "a")
        _ = try lua.run("c.label = 'renamed'")
        #expect(counter.title == "renamed")
        #expect(try lua.run("return c.title == nil", as: Bool.self))
    }

    @Test func readOnlyProperties() throws {
        let lua = try state()
        try lua.setGlobal("c", Counter(name: "a"))
        #expect(luaError(lua, "c.name = 'x'") == "t:1: field 'name' of Counter is read-only")
        #expect(luaError(lua, "c.doubled = 1") == "t:1: field 'doubled' of Counter is read-only")
        #expect(luaError(lua, "c.step = 2") == "t:1: field 'step' of Counter is read-only")
        #expect(try lua.run("return c.step", as: Int.self) == 1)
    }

    @Test func ignoredAndPrivateMembersAreNotExported() throws {
        let lua = try state()
        try lua.setGlobal("c", Counter(name: "a"))
        #expect(try lua.run("return c.secret == nil and c.internalState == nil", as: Bool.self))
        #expect(luaError(lua, "c.secret = 'x'") == "t:1: cannot set field 'secret' of Counter")
    }

    @Test func badPropertyValues() throws {
        let lua = try state()
        try lua.setGlobal("c", Counter(name: "a"))
        #expect(luaError(lua, "c.count = 'many'") == "t:1: bad value for field 'count' of Counter (number expected, got string)")
        #expect(luaError(lua, "c.history = {1, 'x'}") == "t:1: bad value for field 'history' of Counter (number expected at [2], got string)")
    }

    // MARK: Class table

    @Test func constructorsBothWays() throws {
        let lua = try state()
        let made = try lua.run("return Counter.new('n')", as: Counter.self)
        #expect(made.name == "n")
        let called = try lua.run("return Counter('m')", as: Counter.self)
        #expect(called.name == "m")
        #expect(try lua.run("return Counter.withCount('w', 9).count", as: Int.self) == 9)
        #expect(luaError(lua, "Counter()") == "t:1: bad argument #1 to 'Counter' (string expected, got no value)")
        #expect(luaError(lua, "Counter.new(1, 2)") == nil)  // extra arguments are ignored, as in Lua
    }

    @Test func staticMembers() throws {
        let lua = try state()
        let before = Counter.created
        _ = try lua.run("Counter.new('x')")
        // Other tests make Counters in parallel: at least this one was counted.
        #expect(try lua.run("return Counter.created", as: Int.self) > before)
        _ = try lua.run("Counter.created = 100")
        #expect(Counter.created == 100)
        #expect(try lua.run("return Counter.limit", as: Int.self) == 100)
        #expect(luaError(lua, "Counter.limit = 1") == "t:1: field 'limit' of Counter is read-only")
        #expect(luaError(lua, "Counter.nope = 1") == "t:1: cannot set field 'nope' of Counter")
        #expect(try lua.run("return Counter.named('s').name", as: String.self) == "s")
    }

    @Test func registerUnderAnotherName() throws {
        let lua = try LuaState()
        try lua.register(Counter.self, as: "Tally")
        #expect(try lua.run("return Tally('t').name .. tostring(Counter)", as: String.self) == "tnil")
    }

    @Test func objectsKeepTheirIdentity() throws {
        let lua = try state()
        let counter = Counter(name: "a")
        try lua.setGlobal("c", counter)
        let back = try lua.run("return c", as: Counter.self)
        #expect(back === counter)
        #expect(try lua.run("return c:merge(c) == c", as: Bool.self))
    }
}

extension ExportedClassTests {
    @Test func badStaticPropertyValues() throws {
        let lua = try LuaState()
        try lua.register(Counter.self)
        #expect(luaError(lua, "Counter.created = 'x'") == "t:1: bad value for field 'created' (number expected, got string)")
        #expect(try lua.run("return Counter.nope == nil", as: Bool.self))
    }
}
