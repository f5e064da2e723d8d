---@meta bk
-- LuaLS annotations for BlocksBridge's `bk` module. Every exported function has exactly one
-- `function bk.NAME(...) end` line here (checked by the test suite against the exported table).

---@class bk
local bk = {}

-- Core

---Sets `env.bk` and `env.bk_NAME` for every function of the module (raw sets).
---@param env? table defaults to the global table
---@return table env
function bk.installGlobals(env) end

---@return string
function bk.version() end

-- Collections

-- Associated objects

-- Invocation

-- Block execution

-- Timers

-- Observation

-- Dynamic delegates

---A delegate protocol (`bk.protocol`).
---@class bk.Protocol
---@field name string
---@field methods table<string, {required: boolean, returns: any, combine: "and"|"or"|nil}>

---The one dynamic delegate of an object for a protocol. Also has the protocol's methods.
---@class bk.DynamicDelegate
---@field realDelegate table|userdata|nil weak
---@field protocol bk.Protocol
local DynamicDelegate = {}
---@param name string method name or selector
---@param f function
function DynamicDelegate:implementMethod(name, f) end
---@param name string
function DynamicDelegate:removeBlockImplementationForMethod(name) end
---@param name string
---@return function|nil
function DynamicDelegate:blockImplementationForMethod(name) end
---@param name string
---@return boolean
function DynamicDelegate:respondsToSelector(name) end

---Foundation's XMLParser with a dynamic `XMLParserDelegate`.
---@class bk.XMLParser
---@field delegate bk.DynamicDelegate reading gives the dynamic delegate; assigning sets the real one
---@field shouldProcessNamespaces boolean
---@field shouldReportNamespacePrefixes boolean
---@field parserError string|nil
---@field lineNumber integer
---@field columnNumber integer
local XMLParser = {}
---@return boolean parsed
function XMLParser:parse() end
function XMLParser:abortParsing() end

---Declares a delegate protocol (or, without `methods`, returns the registered one).
---@param name string
---@param methods? table<string|integer, {required?: boolean, returns?: any, combine?: "and"|"or"}|true|string>
---@return bk.Protocol
function bk.protocol(name, methods) end

---The dynamic delegate of `obj` for its class's delegate protocol.
---@param obj table|userdata
---@return bk.DynamicDelegate
function bk.dynamicDelegate(obj) end

---The dynamic delegate of `obj` for its class's data source protocol.
---@param obj table|userdata
---@return bk.DynamicDelegate
function bk.dynamicDataSource(obj) end

---@param obj table|userdata
---@param protocol bk.Protocol|string
---@return bk.DynamicDelegate
function bk.dynamicDelegateForProtocol(obj, protocol) end

---@param dd bk.DynamicDelegate
---@param name string method name or selector
---@param f function gets the method's arguments
function bk.implementMethod(dd, name, f) end

---@param dd bk.DynamicDelegate
---@param name string
function bk.removeBlockImplementationForMethod(dd, name) end

---@param dd bk.DynamicDelegate
---@param name string
---@return function|nil
function bk.blockImplementationForMethod(dd, name) end

---@param dd bk.DynamicDelegate
---@param name string
---@return boolean
function bk.respondsToSelector(dd, name) end

---`obj[property]` on instances of `class` gives the dynamic delegate; assigning sets the real one.
---@param class table the instances' metatable
---@param protocol bk.Protocol|string
---@param property? string default "delegate"
function bk.registerDynamicDelegate(class, protocol, property) end

---Block properties backed by delegate methods: `{bk_willShowBlock = "willPresentAlertView"}`.
---@param class table
---@param map table<string, string>
function bk.linkDelegateMethods(class, map) end

---@param xmlString string
---@return bk.XMLParser
function bk.XMLParser(xmlString) end

-- Event handlers

---@param obj table|userdata
---@param f fun(obj: any, ...: any)
---@param events string|string[]
function bk.addEventHandler(obj, f, events) end

---@param obj table|userdata
---@param events? string|string[] default: every handler
function bk.removeEventHandlersForControlEvents(obj, events) end

---@param obj table|userdata
---@param events string|string[]
---@return boolean
function bk.hasEventHandlersForControlEvents(obj, events) end

---Calls `f(obj, ...)` for each handler of any of the events; returns how many ran without error.
---@param obj table|userdata
---@param events string|string[]
---@return integer
function bk.sendActionsForControlEvents(obj, events, ...) end

return bk
