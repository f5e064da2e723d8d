// `import BlocksBridgeExport` gives the macros and the whole bridge.
@_exported import BlocksBridge

/// Exports a class to Lua: its methods, properties, static members and initializers
/// (`lua.register(Counter.self)` makes the global `Counter`; `Counter.new(...)` and `Counter(...)`
/// construct). The base exported class conforms to `LuaExportable`; an exported subclass names
/// its superclass only. Members it cannot export are compile-time errors naming the member and
/// why; private members and those marked `@LuaIgnore` are left out.
///
/// Values need no macro: an enum with String or Int raw values conforms to `LuaEnum`, a Codable
/// struct to `LuaCodable`. (The macro adds no conformance itself: an extension macro attached to
/// a subclass crashes Swift 6.3.)
@attached(member, names: named(luaClass), named(luaExportedType), named(luaObservers), prefixed(luaExported_))
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
