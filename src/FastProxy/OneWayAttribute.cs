namespace XCall;

/// <summary>
/// On a <c>void</c> method of a <see cref="RemotableAttribute"/> interface: the call returns as soon as it
/// is sent, nothing comes back (not even an exception), and calls sent faster than the peer drains them are
/// batched by the transport.
/// </summary>
[AttributeUsage(AttributeTargets.Method, Inherited = false)]
public sealed class OneWayAttribute : Attribute
{
}
