// `import BlocksBridgeExport` gives the macros and the whole bridge.
@_exported import BlocksBridge

/// Exports a type to Lua with no more code:
/// - a class: its methods, properties, static members and initializers (`lua.register(Counter.self)`
///   makes the global `Counter`; `Counter.new(...)` and `Counter(...)` construct);
/// - a struct (Codable): crosses as a Lua table, both ways;
/// - an enum with String or Int raw values: crosses as its raw values.
/// Members it cannot export are compile-time errors naming the member and why; private members
/// and those marked `@LuaIgnore` are left out.
@attached(member, conformances: LuaExportable, LuaObservable,
          names: named(luaClass), named(luaExportedType), named(luaObservers), arbitrary)
@attached(extension, conformances: LuaExportable, LuaObservable, LuaEnum, LuaCodable)
public macro LuaExport() = #externalMacro(module: "BlocksBridgeMacros", type: "LuaExportMacro")

/// Leaves a member of an `@LuaExport` type out of Lua.
@attached(peer)
public macro LuaIgnore() = #externalMacro(module: "BlocksBridgeMacros", type: "LuaMemberMarkerMacro")

/// The member's name in Lua. On an initializer: a static function of the class table
/// (`Point.polar(r, a)`) instead of the constructor.
@attached(peer)
public macro LuaName(_ name: String) = #externalMacro(module: "BlocksBridgeMacros", type: "LuaMemberMarkerMacro")

/// A property Lua may read but not assign (`field 'x' of T is read-only`).
@attached(peer)
public macro LuaReadOnly() = #externalMacro(module: "BlocksBridgeMacros", type: "LuaMemberMarkerMacro")
