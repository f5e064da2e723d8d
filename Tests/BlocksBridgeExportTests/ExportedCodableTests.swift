import Testing
import BlocksBridgeExport

struct ServerConfig: LuaCodable, Equatable {
    struct TLS: Codable, Equatable {
        var certificate: String
        var verify: Bool
    }
    var host: String
    var ports: [Int]
    var tls: TLS?
    var weights: [String: Double] = [:]
}

enum Shade: LuaCodable, Equatable {
    case gray(Int)
    case named(String)
}

@LuaExport
final class Server: LuaExportable {
    var config = ServerConfig(host: "localhost", ports: [80])
    init() {}
    func configure(_ config: ServerConfig) -> Int {
        self.config = config
        return config.ports.count
    }
    func paint(_ shade: Shade) -> Shade { shade }
    func outline(_ node: Outline) -> Int { node.count }
}

/// A recursive Codable type: a table that contains itself would decode forever.
struct Outline: LuaCodable {
    var name: String
    var children: [Outline]
    var count: Int { 1 + children.map(\.count).reduce(0, +) }
}

@Suite struct ExportedCodableTests {
    private func state() throws -> LuaState {
        let lua = try LuaState()
        try lua.setGlobal("server", Server())
        return lua
    }

    @Test func tablesDecodeToCodableValues() throws {
        let lua = try state()
        let server = try lua.global("server", as: Server.self)
        #expect(try lua.run("""
            return server:configure{host = 'example.org', ports = {80, 443},
                                    tls = {certificate = 'c.pem', verify = true}, weights = {a = 0.5}}
            """, as: Int.self) == 2)
        #expect(server.config == ServerConfig(host: "example.org", ports: [80, 443],
                                              tls: .init(certificate: "c.pem", verify: true), weights: ["a": 0.5]))
    }

    @Test func codableValuesEncodeToTables() throws {
        let lua = try state()
        #expect(try lua.run("return server.config.host .. server.config.ports[1]", as: String.self) == "localhost80")
        #expect(try lua.run("return server.config.tls == nil", as: Bool.self))
        let config = ServerConfig(host: "h", ports: [1, 2, 3], tls: .init(certificate: "x", verify: false), weights: ["w": 2])
        try lua.setGlobal("c", config)
        #expect(try lua.run("return #c.ports .. tostring(c.tls.verify) .. c.weights.w", as: String.self) == "3false2.0")
        // Round trip through Lua.
        #expect(try lua.run("return c", as: ServerConfig.self) == config)
    }

    @Test func enumsWithAssociatedValuesRoundTrip() throws {
        let lua = try state()
        try lua.setGlobal("shade", Shade.named("teal"))
        #expect(try lua.run("return server:paint(shade)", as: Shade.self) == .named("teal"))
        #expect(try lua.run("return server:paint{gray = {_0 = 7}}", as: Shade.self) == .gray(7))
    }

    @Test func badTablesNameTheField() throws {
        let lua = try state()
        #expect(luaError(lua, "server:configure{host = 'h', ports = {80, 'x'}}")
                == "t:1: bad argument #1 to 'configure' (field 'ports[2]': number expected, got string)")
        #expect(luaError(lua, "server:configure{ports = {}}")
                == "t:1: bad argument #1 to 'configure' (field 'host': string expected, got nil)")
        #expect(luaError(lua, "server:configure{host = 'h', ports = {}, tls = {certificate = 'c', verify = 1}}")
                == "t:1: bad argument #1 to 'configure' (field 'tls.verify': boolean expected, got number)")
        #expect(luaError(lua, "server:configure{host = 'h', ports = {1.5}}")
                == "t:1: bad argument #1 to 'configure' (field 'ports[1]': number has no integer representation)")
        #expect(luaError(lua, "server:configure('h')") == "t:1: bad argument #1 to 'configure' (table expected, got string)")
        #expect(luaError(lua, "server.config = {host = 1}")?.hasPrefix("t:1: bad value for field 'config' of Server") == true)
    }

    @Test func aTableContainingItselfIsRefused() throws {
        let lua = try state()
        _ = try lua.run("looped = {name = 'root', children = {}} looped.children[1] = looped")
        let error = luaError(lua, "server:outline(looped)")
        #expect(error?.hasPrefix("t:1: bad argument #1 to 'outline' (field 'children[1].children[1]") == true)
        #expect(error?.hasSuffix(": tables nested too deeply)") == true)
        #expect(try lua.run("return server:outline{name = 'a', children = {{name = 'b', children = {}}}}", as: Int.self) == 2)
    }
}
