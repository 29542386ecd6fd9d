using System.Diagnostics.CodeAnalysis;
using System.Threading.Channels;
using XCall.Cluster;

namespace XCall.Channels.Distributed;

/// <summary>How the answers and failures of <see cref="IConstructHost"/> surface at a remote end.</summary>
internal static class RemoteStatus
{
    /// <summary>The exception a call raises when the process hosting the construct is gone.</summary>
    public static RankFailedException Lost(ConstructAddress address, string name, XCallDisconnectedException e) =>
        new(address.Rank, $"it hosts '{name}' and its connection closed ({e.Reason})", e);

    /// <summary>Throws what a status other than 0 of <see cref="IConstructHost"/> stands for.</summary>
    public static void ThrowIfEnded(int status)
    {
        if (status != 0)
        {
            ThrowEnded(status);
        }
    }

    [DoesNotReturn]
    private static void ThrowEnded(int status) =>
        throw (status == HostedChannel.Completed ? new ChannelClosedException() : new PoisonException(status));
}
