import Testing
import BlocksBridgeExport

@LuaExport
final class Version: LuaExportable, Comparable, CustomStringConvertible {
    let major: Int
    let minor: Int
    init(_ major: Int, _ minor: Int) {
        self.major = major
        self.minor = minor
    }
    static func == (a: Version, b: Version) -> Bool { (a.major, a.minor) == (b.major, b.minor) }
    static func < (a: Version, b: Version) -> Bool { (a.major, a.minor) < (b.major, b.minor) }
    var description: String { "v\(major).\(minor)" }
}

@LuaExport
final class Playlist: LuaExportable, RandomAccessCollection {
    var songs: [String]
    init(_ songs: [String]) { self.songs = songs }
    var startIndex: Int { songs.startIndex }
    var endIndex: Int { songs.endIndex }
    subscript(position: Int) -> String { songs[position] }
    func callAsFunction(_ position: Int) -> String? { position < songs.count ? songs[position] : nil }
}

@Suite struct ProtocolMetamethodTests {
    private func state() throws -> LuaState {
        let lua = try LuaState()
        try lua.register(Version.self)
        try lua.register(Playlist.self)
        return lua
    }

    @Test func equatableIsEq() throws {
        let lua = try state()
        #expect(try lua.run("return Version(1, 2) == Version(1, 2)", as: Bool.self))
        #expect(try lua.run("return Version(1, 2) ~= Version(1, 3)", as: Bool.self))
        #expect(try lua.run("return Version(1, 2) == Playlist({})", as: Bool.self) == false)
    }

    @Test func comparableIsLtAndLe() throws {
        let lua = try state()
        #expect(try lua.run("return Version(1, 2) < Version(1, 10)", as: Bool.self))
        #expect(try lua.run("return Version(2, 0) <= Version(2, 0) and not (Version(2, 1) <= Version(2, 0))", as: Bool.self))
        #expect(try lua.run("return Version(3, 0) > Version(2, 9)", as: Bool.self))
        #expect(luaError(lua, "return Version(1, 0) < Playlist({})") == "t:1: attempt to compare userdata with userdata")
    }

    @Test func customStringConvertibleIsTostring() throws {
        let lua = try state()
        #expect(try lua.run("return tostring(Version(1, 2))", as: String.self) == "v1.2")
        // Without the protocol, Lua's default: the class name and an address.
        #expect(try lua.run("return tostring(Playlist({}))", as: String.self).hasPrefix("Playlist: "))
    }

    @Test func collectionIsLenIndexAndPairs() throws {
        let lua = try state()
        try lua.setGlobal("p", Playlist(["a", "b", "c"]))
        #expect(try lua.run("return #p", as: Int.self) == 3)
        #expect(try lua.run("return p[1] .. p[3]", as: String.self) == "ac")
        #expect(try lua.run("return p[0] == nil and p[4] == nil and p[-1] == nil", as: Bool.self))
        #expect(try lua.run("local t = {} for i, s in pairs(p) do t[#t + 1] = i .. s end return table.concat(t, ',')",
                            as: String.self) == "1a,2b,3c")
        // Fields still work next to integer keys.
        #expect(try lua.run("return p.songs[2]", as: String.self) == "b")
    }

    @Test func callAsFunctionIsCall() throws {
        let lua = try state()
        try lua.setGlobal("p", Playlist(["a", "b"]))
        #expect(try lua.run("return p(1)", as: String.self) == "b")
        #expect(try lua.run("return p(5) == nil", as: Bool.self))
        // As for any C function used as __call, the callable itself is argument #1.
        #expect(luaError(lua, "p('x')") == "t:1: bad argument #2 to '__call' (number expected, got string)")
    }
}
