package acp

import (
	"context"
	"slices"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/astrid-go/astrid/internal/registryclient"
	"github.com/astrid-go/astrid/ipc"
)

// visionCapability is what a provider's registry entry lists when its
// model takes images.
const visionCapability = "vision"

// imageTypes are the media types an image block may have: those every
// provider that takes images takes.
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// imageOf is an ACP image block as a prompt image, or an invalid-params
// error naming block i.
func imageOf(i int, img *acpsdk.ContentBlockImage) (ipc.PromptImage, error) {
	mime := strings.ToLower(strings.TrimSpace(img.MimeType))
	switch {
	case img.Data == "":
		return ipc.PromptImage{}, invalidParams("prompt block %d: the image has no data (an image by uri alone is not fetched)", i)
	case !slices.Contains(imageTypes, mime):
		return ipc.PromptImage{}, invalidParams("prompt block %d: image type %q is not taken; send one of %s", i, img.MimeType, strings.Join(imageTypes, ", "))
	}
	return ipc.PromptImage{Data: img.Data, MediaType: mime}, nil
}

// takesImages says, as an invalid-params error, why the model session s
// asks would not take a prompt's images: the session's model (session/set_model),
// else the principal's active one, must list vision in the provider
// registry. nil when it does.
func (a *agent) takesImages(ctx context.Context, s *session) error {
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	list, err := registryclient.List(ctx, s.workspace().Kernel, a.opts.Principal)
	if err != nil {
		return internal("the provider registry did not answer, so whether the model takes images is unknown: %v", err)
	}
	s.mu.Lock()
	id := s.provider
	if id != "" {
		id += ":" + s.model
	}
	s.mu.Unlock()
	if id == "" && list.ActiveModel != nil {
		id = list.ActiveModel.ID
	}
	if id == "" {
		return invalidParams("the prompt has images, and no model is chosen to take them; choose one that does with session/set_model")
	}
	for _, m := range list.Providers {
		if m.ID == id {
			if slices.Contains(m.Capabilities, visionCapability) {
				return nil
			}
			break
		}
	}
	return invalidParams("model %s does not take images (the provider registry lists no %q for it); choose one that does with session/set_model, or send the prompt without them", id, visionCapability)
}
