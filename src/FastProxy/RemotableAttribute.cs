namespace XCall;

/// <summary>
/// Marks an interface as an XCall contract: the generator emits a client proxy, a server dispatcher, a
/// domain (in-process) proxy and marshallers for the data types of its signatures.
/// </summary>
[AttributeUsage(AttributeTargets.Interface, Inherited = false)]
public sealed class RemotableAttribute : Attribute
{
}
