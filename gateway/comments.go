package gateway

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// comments maps the full name of a method, message or field to its leading
// comment in the protos, tidied into one paragraph per blank-line-separated
// block.
type comments map[protoreflect.FullName]string

// Field numbers of descriptor.proto used in source-code-info paths.
const (
	fileMessageType   = 4
	fileService       = 6
	messageField      = 2
	messageNested     = 3
	serviceMethod     = 2
	locationPathSplit = ","
)

// readComments indexes the leading comments of every service, method,
// message and field in set (descriptors with source info).
func readComments(set *descriptorpb.FileDescriptorSet) comments {
	c := comments{}
	for _, f := range set.GetFile() {
		byPath := map[string]string{}
		for _, loc := range f.GetSourceCodeInfo().GetLocation() {
			if lc := loc.GetLeadingComments(); lc != "" {
				byPath[pathKey(loc.GetPath())] = lc
			}
		}
		pkg := protoreflect.FullName(f.GetPackage())
		for i, m := range f.GetMessageType() {
			c.message(byPath, pkg, m, []int32{fileMessageType, int32(i)})
		}
		for i, s := range f.GetService() {
			sp := []int32{fileService, int32(i)}
			sn := pkg.Append(protoreflect.Name(s.GetName()))
			c.set(byPath, sn, sp)
			for j, m := range s.GetMethod() {
				c.set(byPath, sn.Append(protoreflect.Name(m.GetName())), append(append([]int32{}, sp...), serviceMethod, int32(j)))
			}
		}
	}
	return c
}

func (c comments) message(byPath map[string]string, parent protoreflect.FullName, m *descriptorpb.DescriptorProto, path []int32) {
	name := parent.Append(protoreflect.Name(m.GetName()))
	c.set(byPath, name, path)
	for i, f := range m.GetField() {
		c.set(byPath, name.Append(protoreflect.Name(f.GetName())), append(append([]int32{}, path...), messageField, int32(i)))
	}
	for i, n := range m.GetNestedType() {
		c.message(byPath, name, n, append(append([]int32{}, path...), messageNested, int32(i)))
	}
}

func (c comments) set(byPath map[string]string, name protoreflect.FullName, path []int32) {
	if lc, ok := byPath[pathKey(path)]; ok {
		c[name] = tidyComment(lc)
	}
}

func pathKey(p []int32) string {
	var b strings.Builder
	for i, n := range p {
		if i > 0 {
			b.WriteString(locationPathSplit)
		}
		fmt.Fprint(&b, n)
	}
	return b.String()
}

// tidyComment joins a comment's wrapped lines into paragraphs.
func tidyComment(s string) string {
	var paras []string
	var cur []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			if len(cur) > 0 {
				paras = append(paras, strings.Join(cur, " "))
				cur = nil
			}
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		paras = append(paras, strings.Join(cur, " "))
	}
	return strings.Join(paras, "\n\n")
}
