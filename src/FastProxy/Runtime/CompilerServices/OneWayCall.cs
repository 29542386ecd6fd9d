using System.Buffers;
using System.ComponentModel;
using XCall.Marshal;

namespace XCall.Runtime.CompilerServices;

/// <summary>
/// A one-way call's open frame, for generated proxies: write the arguments with <see cref="Arguments"/>, then
/// <see cref="Send"/>; on an exception while writing, <see cref="Abort"/>.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public readonly struct OneWayCall
{
    private readonly XCallConnection _connection;
    private readonly IBufferWriter<byte> _output;

    internal OneWayCall(XCallConnection connection, IBufferWriter<byte> output)
    {
        _connection = connection;
        _output = output;
    }

    /// <summary>A writer of the call's arguments, straight into the transport's memory.</summary>
    public MarshalWriter Arguments() => new(_output) { Context = _connection, Limits = _connection.Options.Limits };

    /// <summary>Publishes the frame (the arguments flushed); returns once it is sent.</summary>
    public void Send() => _connection.SendOpenFrame();

    /// <summary>Drops the frame: its arguments failed to marshal.</summary>
    public void Abort() => _connection.DropOpenFrame();
}
