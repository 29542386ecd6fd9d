using System.Reflection;
using System.Runtime.Loader;
using Microsoft.CodeAnalysis;
using XCall.Generator.Tests.Support;

namespace XCall.Generator.Tests;

/// <summary>
/// The marshallers generated for <see cref="ContractSources.Graphs"/>, compiled and run: object graphs round
/// trip with their identity, and malformed payloads raise only protocol errors. A probe compiled with the
/// contract calls the (internal) generated code and reports what happened as text.
/// </summary>
public sealed class GeneratedMarshallerTests
{
    private const string ProbeSource = """
        using System;
        using System.Buffers;
        using System.Collections.Generic;
        using System.Collections.Immutable;
        using System.Linq;
        using XCall;
        using XCall.Generated;
        using XCall.Marshal;

        namespace Sample.Graphs;

        public static class Probe
        {
            private static byte[] Write<T, TM>(T value) where TM : IMarshaller<T>
            {
                var output = new ArrayBufferWriter<byte>();
                var writer = new MarshalWriter(output);
                TM.Write(ref writer, value);
                writer.Flush();
                return output.WrittenSpan.ToArray();
            }

            private static T Read<T, TM>(byte[] bytes) where TM : IMarshaller<T>
            {
                var reader = new MarshalReader(bytes);
                T value = TM.Read(ref reader);
                reader.EnsureFullyConsumed();
                return value;
            }

            private static readonly XCall.Domain.DomainLink Link = new(new object(), "domain://generated-marshaller-tests");

            private static T RoundTrip<T, TM>(T value) where TM : IMarshaller<T> => Read<T, TM>(Write<T, TM>(value));

            public static string Cycle()
            {
                var a = new Node { Value = 1 };
                var b = new Node { Value = 2, Next = a };
                a.Next = b;
                Node a2 = RoundTrip<Node, Sample_Graphs_Node_XCallMarshaller>(a);
                Node c = Sample_Graphs_Node_XCallMarshaller.Clone(a, Link);
                return $"{a2.Value},{a2.Next!.Value},{ReferenceEquals(a2.Next.Next, a2)},{ReferenceEquals(a2, a)};clone {c.Value},{c.Next!.Value},{ReferenceEquals(c.Next.Next, c)},{ReferenceEquals(c, a)}";
            }

            public static string LongList(int count)
            {
                Node? head = null;
                for (int i = count - 1; i >= 0; i--)
                {
                    head = new Node { Value = i, Next = head };
                }
                Node? copy = RoundTrip<Node, Sample_Graphs_Node_XCallMarshaller>(head!);
                Node? clone = Sample_Graphs_Node_XCallMarshaller.Clone(head!, Link);
                return $"{Count(copy)},{Count(clone)}";
            }

            private static string Count(Node? node)
            {
                int n = 0;
                int wrong = 0;
                for (; node is not null; node = node.Next)
                {
                    wrong += node.Value == n++ ? 0 : 1;
                }
                return $"{n}/{wrong}";
            }

            public static string Shapes()
            {
                var circle = new Circle { X = 1, Radius = 2 };
                Shape[] back = RoundTrip<Shape[], ArrayMarshaller<Shape, Sample_Graphs_Shape_XCallMarshaller>>([circle, new Square { Side = 3 }, circle]);
                List<IRound> rounds = RoundTrip<List<IRound>, ListMarshaller<IRound, Sample_Graphs_IRound_XCallMarshaller>>([circle, circle]);
                return $"{string.Join(",", back.Select(s => s.GetType().Name))},{ReferenceEquals(back[0], back[2])},{((Circle)back[0]).Radius},{((Square)back[1]).Side};{rounds[0].GetType().Name},{ReferenceEquals(rounds[0], rounds[1])}";
            }

            private sealed class BigSquare : Square
            {
            }

            public static string UnknownSubtype()
            {
                try
                {
                    Write<Shape, Sample_Graphs_Shape_XCallMarshaller>(new BigSquare());
                    return "written";
                }
                catch (XCallException e)
                {
                    return e.GetType().Name + ": " + e.Message;
                }
            }

            public static string Sharing()
            {
                var stamp = new Stamp(1, "a");
                var fixedOne = new Fixed(2);
                var tagged = new Tagged(4);
                var counter = new Counter();
                Stamp stampCopy = Sample_Graphs_Stamp_XCallMarshaller.Clone(stamp, Link);
                Fixed fixedCopy = Sample_Graphs_Fixed_XCallMarshaller.Clone(fixedOne, Link);
                Tagged taggedCopy = Sample_Graphs_Tagged_XCallMarshaller.Clone(tagged, Link);
                Counter counterCopy = Sample_Graphs_Counter_XCallMarshaller.Clone(counter, Link);
                Stamp? none = Sample_Graphs_Stamp_XCallMarshaller.Clone(null!, Link);
                var tally = new Tally(5);
                Tally tallyCopy = Sample_Graphs_Tally_XCallMarshaller.Clone(tally, Link);
                var notifier = new Notifier(7);
                var piece = new Piece(8);
                bool notifierShared = ReferenceEquals(notifier, Sample_Graphs_Notifier_XCallMarshaller.Clone(notifier, Link));
                bool pieceShared = ReferenceEquals(piece, Sample_Graphs_Piece_XCallMarshaller.Clone(piece, Link));
                return $"{ReferenceEquals(stamp, stampCopy)},{ReferenceEquals(fixedOne, fixedCopy)},{ReferenceEquals(tagged, taggedCopy)},{ReferenceEquals(counter, counterCopy)},{none is null},{ReferenceEquals(tally, tallyCopy)};{notifierShared},{pieceShared}";
            }

            public static string Records()
            {
                var favorite = new Node { Value = 5 };
                Person person = RoundTrip<Person, Sample_Graphs_Person_XCallMarshaller>(new Person("ada", ["x", "y"], favorite));
                var settings = new Settings { Name = "s", Watched = [favorite, new Node { Value = 6 }] };
                Settings settings2 = RoundTrip<Settings, Sample_Graphs_Settings_XCallMarshaller>(settings);
                Chain chain = RoundTrip<Chain, Sample_Graphs_Chain_XCallMarshaller>(new Chain("a", new Chain("b", null)));
                return $"{person.Name},{string.Join("+", person.Tags)},{person.Favorite!.Value};{settings2.Name},{string.Join("+", settings2.Watched.Select(n => n.Value).Order())};{chain.Name},{chain.Next!.Name},{chain.Next.Next is null}";
            }

            public static string Holders()
            {
                var shared = new Node { Value = 9 };
                Holder holder = RoundTrip<Holder, Sample_Graphs_Holder_XCallMarshaller>(new Holder { Node = shared, Children = [new Holder { Node = shared }] });
                return $"{holder.Node!.Value},{ReferenceEquals(holder.Node, holder.Children![0].Node)}";
            }

            public static string Collections()
            {
                var node = new Node { Value = 3 };
                var index = new Dictionary<string, HashSet<Node>> { ["a"] = [node], ["b"] = [node, new Node()] };
                var back = RoundTrip<Dictionary<string, HashSet<Node>>, DictionaryMarshaller<string, StringMarshaller, HashSet<Node>, HashSetMarshaller<Node, Sample_Graphs_Node_XCallMarshaller>>>(index);
                ImmutableArray<Node> nodes = RoundTrip<ImmutableArray<Node>, ImmutableArrayMarshaller<Node, Sample_Graphs_Node_XCallMarshaller>>([node, node]);
                ImmutableArray<int> ints = RoundTrip<ImmutableArray<int>, UnmanagedImmutableArrayMarshaller<int>>([1, 2]);
                return $"{ReferenceEquals(back["a"].Single(), back["b"].Single(n => n.Value == 3))},{back["b"].Count};{ReferenceEquals(nodes[0], nodes[1])};{string.Join(",", ints)}";
            }

            public static string Lists()
            {
                var shared = new Node { Value = 4 };
                var root = new Folder { Name = "root", Pinned = [shared], Recent = null, Sizes = [1, 2] };
                var child = new Folder { Name = "child", Pinned = [shared, shared], Recent = [shared] };
                root.Children = [child, child, new Folder { Name = "leaf" }];
                child.Children = [root];
                Folder copy = RoundTrip<Folder, Sample_Graphs_Folder_XCallMarshaller>(root);
                Folder child2 = copy.Children[0];
                string folders = $"{copy.Name},{copy.Children.Count},{ReferenceEquals(child2, copy.Children[1])},{copy.Children[2].Name},{copy.Children[2].Children.Count},{ReferenceEquals(child2.Children[0], copy)}";
                string nodes = $"{copy.Pinned[0].Value},{ReferenceEquals(copy.Pinned[0], child2.Pinned[1])},{ReferenceEquals(child2.Recent![0], copy.Pinned[0])},{copy.Recent is null},{string.Join("+", copy.Sizes)}";

                // Album's constructor gives every album the same list: reading must not fill it.
                Album album = RoundTrip<Album, Sample_Graphs_Album_XCallMarshaller>(new Album { Photos = [shared] });
                return $"{folders};{nodes};{album.Photos.Count},{ReferenceEquals(album.Photos, Album.Shared)},{Album.Shared.Count}";
            }

            public static string Uris()
            {
                Uri uri = RoundTrip<Uri, RegisteredMarshaller<Uri, UriMarshaller>>(new Uri("https://example.org/a?b=1"));
                return uri.AbsoluteUri;
            }

            /// <summary>Reads <paramref name="hex"/> with the marshaller of <paramref name="type"/>: "ok" or the exception's type name.</summary>
            public static string ReadHex(string type, string hex)
            {
                byte[] bytes = Convert.FromHexString(hex);
                try
                {
                    _ = type switch
                    {
                        "Node" => (object?)Read<Node, Sample_Graphs_Node_XCallMarshaller>(bytes),
                        "Shape" => Read<Shape, Sample_Graphs_Shape_XCallMarshaller>(bytes),
                        "IRound" => Read<IRound, Sample_Graphs_IRound_XCallMarshaller>(bytes),
                        "Chain" => Read<Chain, Sample_Graphs_Chain_XCallMarshaller>(bytes),
                        "Settings" => Read<Settings, Sample_Graphs_Settings_XCallMarshaller>(bytes),
                        "Holder" => Read<Holder, Sample_Graphs_Holder_XCallMarshaller>(bytes),
                        "Uri" => Read<Uri, RegisteredMarshaller<Uri, UriMarshaller>>(bytes),
                        _ => throw new ArgumentOutOfRangeException(nameof(type)),
                    };
                    return "ok";
                }
                catch (Exception e)
                {
                    return e.GetType().Name;
                }
            }
        }
        """;

    private static readonly Lazy<Type> s_probe = new(CompileProbe);

    private static Type CompileProbe()
    {
        GeneratorOutput output = GeneratorHarness.Run(GeneratorHarness.CreateCompilation((GeneratorHarness.ContractPath, ContractSources.Graphs), ("Probe.cs", ProbeSource)));
        Assert.Empty(output.Diagnostics);
        using var image = new MemoryStream();
        Microsoft.CodeAnalysis.Emit.EmitResult result = output.Compilation.Emit(image);
        Assert.True(result.Success, string.Join("\n", result.Diagnostics.Where(d => d.Severity == DiagnosticSeverity.Error)));
        image.Position = 0;
        // XCall's own assemblies resolve to the ones this test process has loaded.
        Assembly assembly = new AssemblyLoadContext("generated-marshallers", isCollectible: false).LoadFromStream(image);
        return assembly.GetType("Sample.Graphs.Probe", throwOnError: true)!;
    }

    private static string Call(string method, params object[] args) =>
        (string)s_probe.Value.GetMethod(method, BindingFlags.Public | BindingFlags.Static)!.Invoke(null, args)!;

    [Fact]
    public void Generated_marshaller_and_clone_keep_a_cycle()
    {
        Assert.Equal("1,2,True,False;clone 1,2,True,False", Call("Cycle"));
    }

    [Fact]
    public void Generated_marshaller_and_clone_carry_a_million_node_list()
    {
        Assert.Equal("1000000/0,1000000/0", Call("LongList", 1_000_000));
    }

    [Fact]
    public void Generated_marshallers_keep_known_types_of_a_class_and_an_interface()
    {
        Assert.Equal("Circle,Square,Circle,True,2,3;Circle,True", Call("Shapes"));
    }

    [Fact]
    public void Generated_marshaller_refuses_a_subtype_that_is_not_a_known_type()
    {
        string result = Call("UnknownSubtype");
        Assert.StartsWith("XCallException: ", result);
        Assert.Contains("BigSquare", result);
        Assert.Contains("[XCallKnownType(typeof(BigSquare), id)]", result);
    }

    [Fact]
    public void Domain_clone_shares_only_objects_that_cannot_change()
    {
        // Stamp (a positional record) and Fixed (get-only members, a private read-only field) are frozen; Tagged
        // has a private mutable field, Counter and Tally (built by its constructor) a private setter: copied. So
        // are Notifier (an event) and Piece (partial).
        Assert.Equal("True,True,False,False,True,False;False,False", Call("Sharing"));
    }

    [Fact]
    public void Generated_marshallers_build_records_and_init_only_types()
    {
        Assert.Equal("ada,x+y,5;s,5+6;a,b,True", Call("Records"));
    }

    [Fact]
    public void Generated_struct_marshaller_keeps_shared_objects()
    {
        Assert.Equal("9,True", Call("Holders"));
    }

    [Fact]
    public void Generated_marshallers_compose_with_hash_sets_dictionaries_and_immutable_arrays()
    {
        Assert.Equal("True,2;True;1,2", Call("Collections"));
    }

    [Fact]
    public void Generated_marshaller_fills_lists_that_start_empty_and_keeps_sharing()
    {
        Assert.Equal("root,3,True,leaf,0,True;4,True,True,True,1+2;1,False,0", Call("Lists"));
    }

    [Fact]
    public void Registered_marshaller_carries_its_type()
    {
        Assert.Equal("https://example.org/a?b=1", Call("Uris"));
    }

    [Theory]
    [InlineData("Node", "04")]
    [InlineData("Node", "02" + "00000000")]
    [InlineData("Node", "01" + "01000000" + "02" + "07000000")]
    [InlineData("Node", "01" + "01000000" + "02" + "01000000")]
    [InlineData("Node", "03" + "0100")]
    [InlineData("Shape", "01")]
    [InlineData("Shape", "03" + "0300")]
    [InlineData("Shape", "03" + "0A00")]
    [InlineData("IRound", "03" + "0100")]
    [InlineData("Chain", "01" + "01000000" + "6100" + "02" + "00000000")]
    [InlineData("Chain", "01" + "01000000" + "6100" + "05")]
    [InlineData("Settings", "01" + "01000000" + "7300" + "02000000" + "01" + "02" + "01000000")]
    [InlineData("Uri", "03000000" + "3A002F002F00")]
    public void Malformed_payload_raises_only_a_protocol_error(string type, string hex)
    {
        Assert.Equal(nameof(XCallProtocolException), Call("ReadHex", type, hex));
    }

    [Fact]
    public void Struct_nested_in_itself_deeper_than_the_limit_is_a_protocol_error()
    {
        // Holder { Node = null, Children = [Holder { ... }] }, 300 levels: the recursion must stop at MaxDepth, not at the stack's end.
        string nested = string.Concat(Enumerable.Repeat("00" + "01000000", 300)) + "00" + "FFFFFFFF";
        string shallow = string.Concat(Enumerable.Repeat("00" + "01000000", 3)) + "00" + "FFFFFFFF";

        Assert.Equal(nameof(XCallProtocolException), Call("ReadHex", "Holder", nested));
        Assert.Equal("ok", Call("ReadHex", "Holder", shallow));
    }

    [Fact]
    public void Valid_payloads_of_the_malformed_cases_are_read()
    {
        Assert.Equal("ok", Call("ReadHex", "Node", "01" + "01000000" + "02" + "00000000"));
        Assert.Equal("ok", Call("ReadHex", "Shape", "03" + "0200" + "0000000000000000" + "0000000000000000"));
        Assert.Equal("ok", Call("ReadHex", "Chain", "01" + "01000000" + "6100" + "00"));
        Assert.Equal("ok", Call("ReadHex", "Uri", "0A000000" + "680074007400700073003A002F002F0078002F00"));
    }
}
