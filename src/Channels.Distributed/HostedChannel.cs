using System.Threading.Channels;

namespace XCall.Channels.Distributed;

/// <summary>
/// A channel this process hosts, as the remote ends reach it: each operation runs on the in-process channel's
/// own ends and turns poison and completion into the status codes of <see cref="IConstructHost"/>.
/// </summary>
internal abstract class HostedChannel
{
    internal const int Completed = -1;

    public abstract ValueTask<int> WriteWordAsync(long word, CancellationToken cancellationToken);

    public abstract ValueTask<int> WriteBytesAsync(byte[] value, CancellationToken cancellationToken);

    public abstract ValueTask<WordRead> ReadWordAsync(bool extended, CancellationToken cancellationToken);

    public abstract ValueTask<BytesRead> ReadBytesAsync(bool extended, CancellationToken cancellationToken);

    public abstract void EndRead();

    public abstract void Poison(int strength);

    public abstract void Complete();

    public abstract WriterGrant OpenWriter();

    public abstract void WriteBatch(int writer, long sequence, int returned, ReadOnlySpan<long> words, ReadOnlySpan<byte> bytes, ReadOnlySpan<int> lengths);

    public abstract Task<WriterGrant> CreditsAsync(int writer, bool urgent);

    public abstract Task AppliedAsync(int writer, long batches);

    public abstract void EndAfter(int writer, long batches, int strength);
}

/// <inheritdoc/>
/// <remarks>A channel without a buffer gets a <see cref="RemoteEndsPump"/> (<paramref name="pump"/>), which each remote operation tells its connection.</remarks>
internal sealed class HostedChannel<T>(ChannelIn<T> input, ChannelOut<T> output, ChannelCodec<T> codec, Intake<T>? intake, RemoteEndsPump? pump) : HostedChannel
{
    private static readonly byte[] s_none = [];

    public override ValueTask<int> WriteWordAsync(long word, CancellationToken cancellationToken)
    {
        pump?.Saw();
        return WriteAsync(codec.FromWord(word), cancellationToken);
    }

    public override ValueTask<int> WriteBytesAsync(byte[] value, CancellationToken cancellationToken)
    {
        pump?.Saw();
        return WriteAsync(codec.FromBytes(value), cancellationToken);
    }

    public override async ValueTask<WordRead> ReadWordAsync(bool extended, CancellationToken cancellationToken)
    {
        pump?.Saw();
        (T value, int status) = await ReadAsync(extended, cancellationToken).ConfigureAwait(false);
        return status == 0 ? new WordRead(codec.ToWord(value), 0) : new WordRead(0, status);
    }

    public override async ValueTask<BytesRead> ReadBytesAsync(bool extended, CancellationToken cancellationToken)
    {
        pump?.Saw();
        (T value, int status) = await ReadAsync(extended, cancellationToken).ConfigureAwait(false);
        return status == 0 ? new BytesRead(codec.ToBytes(value), 0) : new BytesRead(s_none, status);
    }

    public override void EndRead() => input.EndRead();

    public override void Poison(int strength)
    {
        output.Poison(strength);
        intake?.Ended(strength);
    }

    public override void Complete()
    {
        output.Complete();
        intake?.Ended(Completed);
    }

    public override WriterGrant OpenWriter() => intake?.Open() ?? new WriterGrant(-1, 0, 0);

    public override void WriteBatch(int writer, long sequence, int returned, ReadOnlySpan<long> words, ReadOnlySpan<byte> bytes, ReadOnlySpan<int> lengths)
    {
        T[] values;
        if (codec.IsWord)
        {
            values = new T[words.Length];
            for (int i = 0; i < values.Length; i++)
            {
                values[i] = codec.FromWord(words[i]);
            }
        }
        else
        {
            values = new T[lengths.Length];
            for (int i = 0; i < values.Length; i++)
            {
                int length = lengths[i];
                if ((uint)length > (uint)bytes.Length)
                {
                    throw new XCallProtocolException($"A batch of values claims {length} bytes where {bytes.Length} are left.");
                }
                values[i] = codec.FromBytes(bytes[..length].ToArray());
                bytes = bytes[length..];
            }
        }
        Intake().Arrive(writer, sequence, values, returned);
    }

    public override Task<WriterGrant> CreditsAsync(int writer, bool urgent) => Intake().RequestAsync(writer, urgent);

    public override Task AppliedAsync(int writer, long batches) => Intake().AppliedAsync(writer, batches);

    public override void EndAfter(int writer, long batches, int strength) => Intake().EndAfter(writer, batches, strength);

    private Intake<T> Intake() => intake ?? throw new InvalidOperationException("This channel has no buffer: its writers write one value at a time.");

    private ValueTask<int> WriteAsync(T value, CancellationToken cancellationToken)
    {
        // A write a reader takes at once (the remote write to a waiting reader) completes here, without an async state
        // machine (whose start and end each look up the thread's contexts).
        ValueTask pending;
        try
        {
            pending = output.WriteAsync(value, cancellationToken);
            if (pending.IsCompletedSuccessfully)
            {
                pending.GetAwaiter().GetResult(); // consumed once, as an await would
                return new ValueTask<int>(0);
            }
        }
        catch (Exception e) when (Ended(e, out int status))
        {
            return new ValueTask<int>(status);
        }
        return AwaitWriteAsync(pending);
    }

    private static async ValueTask<int> AwaitWriteAsync(ValueTask pending)
    {
        try
        {
            await pending.ConfigureAwait(false);
            return 0;
        }
        catch (Exception e) when (Ended(e, out int status))
        {
            return status;
        }
    }

    private async ValueTask<(T Value, int Status)> ReadAsync(bool extended, CancellationToken cancellationToken)
    {
        try
        {
            T value = extended ? await input.BeginReadAsync(cancellationToken).ConfigureAwait(false) : await input.ReadAsync(cancellationToken).ConfigureAwait(false);
            return (value, 0);
        }
        catch (Exception e) when (Ended(e, out int status))
        {
            return (default!, status);
        }
    }

    /// <summary>Whether <paramref name="e"/> says the channel ended (poisoned or completed), with the status that tells the remote end.</summary>
    private static bool Ended(Exception e, out int status)
    {
        status = e switch
        {
            PoisonException poison => poison.Strength,
            ChannelClosedException => Completed,
            _ => 0,
        };
        return status != 0;
    }
}
