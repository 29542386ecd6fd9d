using System.Diagnostics.CodeAnalysis;
using System.Threading.Channels;

namespace XCall.Channels;

/// <summary>Throws from out of line, so the channel operations stay small.</summary>
internal static class ThrowHelper
{
    [DoesNotReturn]
    internal static void ThrowPoison(int strength) => throw new PoisonException(strength);

    [DoesNotReturn]
    internal static void ThrowClosed() => throw new ChannelClosedException();

    [DoesNotReturn]
    internal static void ThrowSecondEnd(string kind, string end) =>
        throw new InvalidOperationException($"{kind} has one {end}, but a second {end} came while the first was still waiting.");

    [DoesNotReturn]
    internal static void ThrowNoExtendedRead() => throw new InvalidOperationException("EndRead without a BeginRead before it.");

    [DoesNotReturn]
    internal static void ThrowExtendedReadOpen() => throw new InvalidOperationException("BeginRead again before EndRead.");

    [DoesNotReturn]
    internal static void ThrowSharedGuard(string kind, string end) =>
        throw new InvalidOperationException($"{kind} has shared {end} ends, which cannot be guards in an Alternative: another {end} could take the communication the Alternative chose.");
}
