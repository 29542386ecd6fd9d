using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using XCall.Cluster;
using XCall.Communicator.Eager;

namespace XCall.Communicator;

/// <summary>
/// An MPI-style communicator over an XCall <see cref="ClusterWorld"/>: a group of ranks that send and receive
/// messages matched by source and tag, and run collectives together. <see cref="JoinAsync"/> joins the world and
/// gives its communicator (<see cref="World"/>); <see cref="Split"/> makes sub-communicators.
/// </summary>
/// <remarks>
/// Messages are arrays, spans or single values of unmanaged types, copied as memory. A send never waits for its
/// receive (except <see cref="SendSync{T}(T[], int, int)"/>): a message that no receive waits for yet is kept by the
/// receiver. Messages of one sender with one tag are received in the order sent. Messages of at least
/// <see cref="LargeMessageBytes"/> go as a call whose block the receiver copies straight into its buffer (from the
/// sender's array over shared memory with cross-memory attach, for arrays of at least the transport's lending
/// threshold); the send returns once the receiving rank has taken the block (into the matching receive's buffer,
/// or kept for a later one). Smaller ones go one way, as a one-way call. To a rank on this node, messages of up to
/// 16 KiB are written straight into its eager inbox instead (shared memory the receiving thread polls) while it has room,
/// and larger ones are lent: the inbox gets where the bytes are, and the receive that takes the message copies them
/// once, straight from the sender's memory into its buffer (cross-memory attach); the send returns once it has, or
/// once the receiving rank held a copy for a later receive.
/// </remarks>
public sealed partial class Communicator : IAsyncDisposable
{
    /// <summary>A receive or probe that accepts a message from any rank.</summary>
    public const int AnySource = -1;

    /// <summary>A receive or probe that accepts a message with any tag.</summary>
    public const int AnyTag = -1;

    /// <summary>
    /// The message size, in bytes, from which a message is sent as a call the receiver copies straight into its buffer:
    /// 4 KiB. To a rank on this node, messages of up to 16 KiB go through its eager inbox instead while it has room.
    /// </summary>
    /// <remarks>From about this size on, the call's reply costs less than the copies and the array a one-way message takes on its way.</remarks>
    public const int LargeMessageBytes = 4 << 10;

    /// <summary>The message size from which <see cref="SendAsync{T}(ReadOnlyMemory{T}, int, int, CancellationToken)"/> sends on the pool rather than on the caller's thread.</summary>
    private const int AsyncSendOnPoolBytes = 32 << 10;

    private static Communicator? s_world;

    private readonly WorldMessaging _messaging;
    private readonly int[] _worldRanks;
    private readonly int[] _ranksByWorldRank; // by world rank: its rank here, or -1
    private readonly long _context;
    private int _splits;

    private Communicator(WorldMessaging messaging, int[] worldRanks, long context)
    {
        _messaging = messaging;
        _worldRanks = worldRanks;
        _ranksByWorldRank = new int[messaging.World.Size];
        Array.Fill(_ranksByWorldRank, -1);
        for (int rank = 0; rank < worldRanks.Length; rank++)
        {
            _ranksByWorldRank[worldRanks[rank]] = rank;
        }
        _context = context;
        Rank = _ranksByWorldRank[messaging.World.Rank];
    }

    /// <summary>The communicator of every rank of the world, once <see cref="JoinAsync"/> made it.</summary>
    /// <exception cref="InvalidOperationException">No world was joined in this process.</exception>
    public static Communicator World => s_world ?? throw new InvalidOperationException("No world is joined: call Communicator.JoinAsync first.");

    /// <summary>This rank in the communicator, 0 to <see cref="Size"/> - 1.</summary>
    public int Rank { get; }

    /// <summary>How many ranks the communicator has.</summary>
    public int Size => _worldRanks.Length;

    /// <summary>The cluster world the communicator's ranks belong to.</summary>
    public ClusterWorld Cluster => _messaging.World;

    /// <summary>
    /// Joins the world the environment describes (<see cref="ClusterWorld.JoinAsync"/>) and returns its communicator,
    /// which <see cref="World"/> returns from then on. Dispose it to leave the world.
    /// </summary>
    /// <param name="options">The world's settings. Its <see cref="ClusterOptions.Services"/>, when given, gets the communicator's
    /// mailbox and must run calls inline (<see cref="DispatchMode.Inline"/>), which keeps each sender's messages in order;
    /// when null, the communicator makes such a server.</param>
    /// <param name="cancellationToken">Cancels the join.</param>
    /// <exception cref="ArgumentException">The given services run calls concurrently.</exception>
    public static async Task<Communicator> JoinAsync(ClusterOptions? options = null, CancellationToken cancellationToken = default)
    {
        options ??= ClusterOptions.Default;
        XCallServer services = options.Services ?? new XCallServer(options.Remote.Connection with { DispatchMode = DispatchMode.Inline });
        if (services.Options.DispatchMode != DispatchMode.Inline)
        {
            throw new ArgumentException("The communicator's services must run calls inline (DispatchMode.Inline): concurrent dispatch would reorder a sender's messages.", nameof(options));
        }
        var mailbox = new Mailbox();
        services.Add<IMailbox>(mailbox);
        ClusterWorld world = await ClusterWorld.JoinAsync(options with { Services = services }, cancellationToken).ConfigureAwait(false);
        var communicator = new Communicator(new WorldMessaging(world, mailbox), [.. Enumerable.Range(0, world.Size)], 1);
        s_world = communicator;
        return communicator;
    }

    /// <summary>The world rank of this communicator's <paramref name="rank"/>.</summary>
    public int WorldRank(int rank)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)rank, (uint)Size, nameof(rank));
        return _worldRanks[rank];
    }

    /// <summary>Leaves the world (for <see cref="World"/>; a communicator made by <see cref="Split"/> has nothing of its own to end).</summary>
    public async ValueTask DisposeAsync()
    {
        if (_context == 1)
        {
            Interlocked.CompareExchange(ref s_world, null, this);
            await _messaging.World.DisposeAsync().ConfigureAwait(false);
            _messaging.Dispose();
        }
    }

    /// <summary>Tests: what the world's communicators share.</summary>
    internal WorldMessaging Messaging => _messaging;

    private long PointToPointContext => _context << 1;

    private long CollectiveContext => (_context << 1) | 1;

    /// <summary>Sends <paramref name="data"/> to <paramref name="destination"/>; when <paramref name="array"/> is given, data is its block from <paramref name="start"/>, which a large message lends.</summary>
    private unsafe void SendCore<T>(ReadOnlySpan<T> data, T[]? array, int start, int destination, int tag, long context) where T : unmanaged
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)destination, (uint)Size, nameof(destination));
        int to = _worldRanks[destination];
        int from = _messaging.World.Rank;
        IMailbox peer = Peer(to);
        int bytes = data.Length * sizeof(T);
        try
        {
            if (to == from)
            {
                peer.Post(from, context, tag, MemoryMarshal.AsBytes(data).ToArray()); // the mailbox keeps the array
            }
            else if (bytes <= EagerRing.MaxPayload && _messaging.TrySendEager(to, context, tag, MemoryMarshal.AsBytes(data)))
            {
                // Written into the receiver's inbox (a rank on this node): up to 16 KiB, two copies cost less than a call.
            }
            else if (bytes > EagerRing.MaxPayload && _messaging.TryLend(to, context, tag, MemoryMarshal.AsBytes(data)))
            {
                // Lent to a rank on this node: it copied the bytes straight from this process's memory.
            }
            else if (bytes < LargeMessageBytes)
            {
                _messaging.CountPost(to);
                // The one-way call copies the bytes into the transport before it returns: a pooled array carries them.
                byte[] pooled = ArrayPool<byte>.Shared.Rent(bytes);
                try
                {
                    MemoryMarshal.AsBytes(data).CopyTo(pooled);
                    peer.Post(from, context, tag, pooled.AsMemory(0, bytes));
                }
                finally
                {
                    ArrayPool<byte>.Shared.Return(pooled);
                }
            }
            else
            {
                _messaging.AnnounceLarge(to);
                DeliverLarge(peer, from, context, tag, data, array, start);
            }
        }
        catch (XCallException e) when (e is not MessageTruncatedException)
        {
            throw _messaging.Failed(to, e);
        }
    }

    /// <summary>Sends a large message as the call whose block the receiver copies straight into its buffer (lent from <paramref name="array"/> when given).</summary>
    private static void DeliverLarge<T>(IMailbox peer, int from, long context, int tag, ReadOnlySpan<T> data, T[]? array, int start) where T : unmanaged
    {
        if (array is not null && typeof(T) == typeof(double))
        {
            peer.DeliverDoubles(from, context, tag, new LentSpan<double>(Unsafe.As<double[]>(array), start, data.Length));
        }
        else if (array is not null && typeof(T) == typeof(byte))
        {
            peer.DeliverBytes(from, context, tag, new LentSpan<byte>(Unsafe.As<byte[]>(array), start, data.Length));
        }
        else if (array is not null && typeof(T) == typeof(int))
        {
            peer.DeliverInt32s(from, context, tag, new LentSpan<int>(Unsafe.As<int[]>(array), start, data.Length));
        }
        else if (array is not null && typeof(T) == typeof(long))
        {
            peer.DeliverInt64s(from, context, tag, new LentSpan<long>(Unsafe.As<long[]>(array), start, data.Length));
        }
        else if (array is not null && typeof(T) == typeof(float))
        {
            peer.DeliverSingles(from, context, tag, new LentSpan<float>(Unsafe.As<float[]>(array), start, data.Length));
        }
        else
        {
            peer.DeliverBytes(from, context, tag, new LentSpan<byte>(MemoryMarshal.AsBytes(data)));
        }
    }

    private IMailbox Peer(int worldRank)
    {
        try
        {
            return _messaging.Peer(worldRank);
        }
        catch (XCallException e)
        {
            throw _messaging.Failed(worldRank, e);
        }
    }

    private ReceiveRequest<T> Post<T>(ReceiveRequest<T> request) where T : unmanaged
    {
        request.Bell = _messaging.Inbox;
        _messaging.Mailbox.Receive(request);
        return request;
    }

    /// <summary>
    /// Waits for a blocking receive, reading the connection its message comes over on this thread when the mailbox
    /// knows it; <paramref name="spun"/>: the turns its try with no request already spun on the inbox.
    /// </summary>
    private MessageStatus Await(ReceiveRequest request, int spun = 0) => request.Wait(_messaging.Mailbox.LinkFor(request.Source), _messaging.Inbox, spun);

    private int SourceToWorld(int source)
    {
        if (source == AnySource)
        {
            return AnySource;
        }
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)source, (uint)Size, nameof(source));
        return _worldRanks[source];
    }

    private static void CheckTag(int tag, bool receiving)
    {
        if (tag < 0 && !(receiving && tag == AnyTag))
        {
            throw new ArgumentOutOfRangeException(nameof(tag), tag, receiving ? "A tag is at least 0, or AnyTag." : "A tag is at least 0.");
        }
    }

    /// <summary>The status as this communicator names ranks.</summary>
    private MessageStatus Local(MessageStatus status) => status with { Source = _ranksByWorldRank[status.Source] };

    private async Task<MessageStatus> LocalAsync(Task<MessageStatus> status) => Local(await status.ConfigureAwait(false));
}
