using System.Buffers;
using System.Text.Json;
using BenchmarkDotNet.Attributes;
using MemoryPack;
using MessagePack;
using MessagePack.Resolvers;
using XCall.Generated;
using XCall.Marshal;

namespace XCall.Bench;

/// <summary>
/// The same 1,000-object graph (a tree of <see cref="TreeNode"/>) written and read back by XCall's generated
/// marshaller, System.Text.Json, MessagePack-CSharp and MemoryPack, in the same run. One operation = one round
/// trip. XCall keeps object identity within a message (an object reached twice arrives as one); MemoryPack
/// runs in its circular-reference mode, which does too, so both pay for tracking references;
/// System.Text.Json and MessagePack, with their defaults here, do not.
/// </summary>
[MemoryDiagnoser]
public class GraphSerializerBenchmarks
{
    /// <summary>The signature of this suite's rows (the serializer is their transport); <c>--filter graph1000</c> selects them.</summary>
    public const string Signature = "graph1000-roundtrip";

    private readonly TreeNode _tree = CallCostService.Tree(1000);
    private readonly ArrayBufferWriter<byte> _buffer = new(1 << 20);
    private static readonly JsonSerializerOptions s_json = new() { IncludeFields = true };
    private static readonly MessagePackSerializerOptions s_msgpack = ContractlessStandardResolverAllowPrivate.Options;

    /// <summary>Each serializer must give back the whole tree, or its figure would time a broken round trip.</summary>
    [GlobalSetup]
    public void CheckRoundTrips()
    {
        int expected = Count(_tree);
        foreach ((string name, Func<TreeNode> roundTrip) in new (string, Func<TreeNode>)[] { ("xcall", XCall), ("system-text-json", SystemTextJson), ("messagepack", MessagePack), ("memorypack", MemoryPack) })
        {
            if (Count(roundTrip()) is int got && got != expected)
            {
                throw new InvalidOperationException($"{name} read back {got} of the tree's {expected} nodes.");
            }
        }
    }

    private static int Count(TreeNode node) => 1 + node.Children.Sum(Count);

    [Benchmark(Description = "xcall")]
    public TreeNode XCall()
    {
        _buffer.ResetWrittenCount();
        var writer = new MarshalWriter(_buffer);
        XCall_Bench_TreeNode_XCallMarshaller.Write(ref writer, _tree);
        writer.Flush();
        var reader = new MarshalReader(_buffer.WrittenSpan);
        TreeNode copy = XCall_Bench_TreeNode_XCallMarshaller.Read(ref reader);
        reader.EnsureFullyConsumed();
        return copy;
    }

    [Benchmark(Description = "system-text-json")]
    public TreeNode SystemTextJson()
    {
        _buffer.ResetWrittenCount();
        using (var json = new Utf8JsonWriter(_buffer))
        {
            JsonSerializer.Serialize(json, _tree, s_json);
        }
        return JsonSerializer.Deserialize<TreeNode>(_buffer.WrittenSpan, s_json)!;
    }

    [Benchmark(Description = "messagepack")]
    public TreeNode MessagePack()
    {
        _buffer.ResetWrittenCount();
        MessagePackSerializer.Serialize(_buffer, _tree, s_msgpack);
        return MessagePackSerializer.Deserialize<TreeNode>(_buffer.WrittenMemory, s_msgpack);
    }

    [Benchmark(Description = "memorypack")]
    public TreeNode MemoryPack()
    {
        _buffer.ResetWrittenCount();
        MemoryPackSerializer.Serialize(_buffer, _tree);
        return MemoryPackSerializer.Deserialize<TreeNode>(_buffer.WrittenSpan)!;
    }
}
