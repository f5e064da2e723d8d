import Testing
import BlocksBridgeExport

@LuaExport
final class Person: LuaExportable {
    @LuaObserved("name") var name = ""
    @LuaObserved("age") var age = 0
    init() {}
}

@Suite struct ExportedObservationTests {
    @Test func observedPropertiesNotifyLuaAndSwift() throws {
        let lua = try LuaState()
        lua.installGlobals()
        let person = Person()
        try lua.setGlobal("person", person)
        var seen: [String] = []
        person.luaObservers.observe("name") { change in seen.append("\(change.old)->\(change.new)") }
        _ = try lua.run("""
            log = {}
            bk.addObserverForKeyPath(person, 'age', {'new'}, function(p, change) log[#log + 1] = change.new end)
            person.name = 'Ada'
            person.age = 36
            """)
        person.age = 37
        #expect(seen == ["->Ada"])
        #expect(try lua.run("return log", as: [Int].self) == [36, 37])
        #expect(try lua.run("return person:bk_observers() ~= nil", as: Bool.self))
        #expect(luaError(lua, "person.age = 'old'") == "t:1: bad value for field 'age' of Person (number expected, got string)")
    }
}
