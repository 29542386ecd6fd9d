using System.Net.Sockets;

namespace XCall.Transport;

/// <summary>How a <see cref="HandshakeQueue{TChannel}"/> bounds, names and reports the handshakes it runs.</summary>
/// <param name="Deadline">How long one handshake may run, from its accept (infinite allowed).</param>
/// <param name="DeadlineOption">The option that sets <paramref name="Deadline"/>, named in the timeout's message.</param>
/// <param name="Grace">How long a handshake that has spoken may run before a newcomer may take its slot (infinite: never).</param>
/// <param name="GraceOption">The option that sets <paramref name="Grace"/>, named in the replaced peer's message.</param>
/// <param name="ThreadName">Prefix of the accept and handshake threads' names.</param>
/// <param name="Describe">The peer's name in reports (its address, or its process), read once at accept.</param>
public readonly record struct HandshakePolicy(
    TimeSpan Deadline,
    string DeadlineOption,
    TimeSpan Grace,
    string GraceOption,
    string ThreadName,
    Func<Socket, string> Describe);
