namespace XCall.Runtime;

/// <summary>An object calls can name on a connection, with the dispatcher that serves it.</summary>
internal sealed record ExposedObject(object Target, Dispatcher Dispatcher);
