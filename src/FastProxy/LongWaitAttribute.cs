namespace XCall;

/// <summary>
/// On an asynchronous method (returning a task) of a <see cref="RemotableAttribute"/> interface whose reply may take
/// long (a standing request answered when something happens, a wait for other processes): the call goes out marked
/// so (<see cref="Transport.FrameFlags.LongWait"/>), its caller does not poll for the reply, and the connection's other
/// calls are not held to expect it. Its reply wakes the thread that reads the connection when it comes. A method
/// answered at once gains nothing from it; on other methods the generator reports XCALL015.
/// </summary>
[AttributeUsage(AttributeTargets.Method, Inherited = false)]
public sealed class LongWaitAttribute : Attribute
{
}
